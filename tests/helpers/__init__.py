"""What several test modules share: data writers, servers, pages and references."""
