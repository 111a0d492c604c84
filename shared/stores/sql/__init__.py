"""What both store engines share in SQL, one module per role (docs/architecture.md section 4, "stores").

See ``shared/stores/__init__.py`` for the layout. Everything here runs over
``runner.SqlRunner``, which both engines' connections implement.
"""
