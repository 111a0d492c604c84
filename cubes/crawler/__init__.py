"""The crawler cube: decides *how fast* each host is fetched; fetches each URL once for all who asked."""
