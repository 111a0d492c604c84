"""The webmaster console in the browser, beside the frontend (docs/architecture.md section 10).

``session.py`` signs in and guards forms; ``context.py`` holds the services;
``views.py`` the pages, ``actions.py`` the forms, ``routes.py`` the wiring.
Templates: ``cubes/frontend/html/console/``.
"""
