"""The topic contracts as package data: the catalog, the JSON Schemas and the AsyncAPI document.

Files only (see README.md for the versioning rule); ``shared.contracts`` reads them.
"""
