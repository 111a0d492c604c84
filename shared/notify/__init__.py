"""Notifications (docs/architecture.md section 10, "Notifications"): one event model (``events.py``),
one rule of who is told what, how (``settings.py``), signed webhooks behind the SSRF guard
(``signing.py``, ``webhook.py``), e-mail through SMTP (``mail.py``), the notifier that tells, sends,
retries and sends the digests (``notifier.py``), and what the API and the console do (``service.py``).
"""
