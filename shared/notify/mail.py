"""E-mail through SMTP (docs/architecture.md section 10, "Notifications").

The standard library's ``smtplib`` in a thread (``asyncio.to_thread``): a notification is a few
messages a minute at most, so a blocking client off the loop costs one thread for the second a
message takes, and needs no dependency (aiosmtplib would be one more library for the same SMTP
exchange). ``notify.smtp_host`` empty: no e-mail is sent, and a delivery by e-mail fails saying so.
The address was checked where it entered (``shared/notify/settings.py``); the message is built by
``email.message.EmailMessage``, which refuses a header with a line break in it.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from shared.config import NotifyConfig
from shared.notify.webhook import WebhookResult

__all__ = ["MailSender"]

#: an SMTP exchange gets this long (connect, STARTTLS, the message)
_TIMEOUT_S = 20.0


class MailSender:
    def __init__(self, config: NotifyConfig) -> None:
        self._config = config

    @property
    def ready(self) -> bool:
        return bool(self._config.smtp_host)

    async def send(self, to: str, subject: str, text: str, *, at: datetime) -> WebhookResult:
        if not self.ready:
            return WebhookResult(False, None, "no SMTP server is set (notify.smtp_host): the operator sets one")
        msg = EmailMessage()
        msg["From"] = self._config.mail_from
        msg["To"] = to
        msg["Subject"] = subject
        msg["Message-ID"] = make_msgid(domain="turbocubes")
        msg["Date"] = format_datetime(at)
        msg.set_content(text)
        try:
            await asyncio.to_thread(self._send, msg)
        except (smtplib.SMTPException, OSError, ValueError) as exc:
            return WebhookResult(False, None, f"SMTP: {type(exc).__name__}: {exc}")
        return WebhookResult(True)

    def _send(self, msg: EmailMessage) -> None:
        c = self._config
        with smtplib.SMTP(c.smtp_host, c.smtp_port, timeout=_TIMEOUT_S) as smtp:
            if c.smtp_starttls:
                smtp.starttls(context=ssl.create_default_context())
            if c.smtp_user:
                smtp.login(c.smtp_user, c.smtp_password)
            smtp.send_message(msg)
