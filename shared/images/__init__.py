"""The images' room: a document's images on their way to the CDN (docs/architecture.md section 4, "Rooms").

Which media a document names (``media``), the image registry's look-ups (``lookups``), a document parked
until its images are cached (``parked``) and the smaller copies made of an image (``variants``). It may
import the problems room only.
"""
