"""The web application, its static pages and the ``sumlens start`` daemon."""
