-- SPDX-License-Identifier: MIT
-- oncehook schema, version 3: one index fewer to write per event.
--
-- events_received_at served only "oncehook list", newest first; list
-- now orders by id (the order events were recorded in, which is the
-- order they were received in), and a new event writes one index page
-- less.
DROP INDEX IF EXISTS events_received_at;
