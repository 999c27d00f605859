"""The read path held warm: ``ReadService`` (lookup, context, ask, lineage over one index), the HTTP server
``mem serve --http`` runs it in, the page it renders lineage on, and the client the CLI finds it with."""
