"""The status views (docs/architecture.md section 10), one job per module.

* ``gather``  -- read the stores once per request (pipeline aggregates; one host);
* ``view``    -- the view model: every state, colour and phrase, in plain Python;
* ``payload`` -- the view model as JSON;
* ``page``    -- the view model as HTML, through Jinja2 templates that escape every value.

The public page (``/status``) shows pipeline-wide aggregates only; one host's
feeds, errors and crawl lane are the webmaster console's (``/console/hosts/H``),
behind a sign-in that checks the tenant owns the host.
"""
