"""The dashboard's own ``/api/v1`` routes: sibling route modules over one read surface."""
