"""History of channels for trends: one request over the recent history on the bus
and an archiver for older ranges, reduced to what a plot can show
(``docs/protocol.md``, ``hist``). Its own modules: the live path never calls here."""
