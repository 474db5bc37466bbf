-- SPDX-License-Identifier: MIT
-- oncehook schema, version 8: the payload index holds only the events
-- the replay guard can ask about.
--
-- Version 2's index (endpoint, payload_hash) is read only by the replay
-- guard, which only endpoints without a signed timestamp or with an
-- unsigned key have (docs/providers.md).  A hash is random, so every
-- event inserted into it wrote one more scattered page (of the seven or
-- eight a new event writes), for endpoints that never read it.
-- Each event now says whether its endpoint had the guard when it was
-- stored: guarded 1 (yes), 0 (no: kept out of the index), NULL (stored
-- before this version: kept in, as before).
ALTER TABLE events ADD COLUMN guarded INTEGER;
DROP INDEX events_endpoint_payload;
CREATE INDEX events_endpoint_payload ON events (endpoint, payload_hash)
	WHERE guarded IS NOT 0;
