"""`rw serve`: PostgreSQL's wire protocol over a Session, so psql, drivers and GUI tools connect.

protocol (message framing), auth (SCRAM-SHA-256), pgtypes (OIDs, text/binary values,
parameters as literals), placeholders ($n), sqlstate (error codes), connection (one
client), server (the listener and the shared session), copy (COPY FROM STDIN / TO STDOUT),
client (the `rw --host` side).
"""
