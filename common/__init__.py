"""Small pure helpers the apps share, one copy of each (no Django): the websocket message envelope (``wire``),
figures rendered to bytes (``figures``), statistics (``stats``)."""
