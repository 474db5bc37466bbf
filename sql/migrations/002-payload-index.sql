-- SPDX-License-Identifier: MIT
-- oncehook schema, version 2: find an event by its payload.
--
-- For schemes whose signature covers neither a timestamp nor the key
-- (hmac-sha256 with a key header, github, shopify, gitlab), a captured
-- request could be replayed under a new, unsigned key header.  Such an
-- endpoint answers a payload it has already recorded as a duplicate,
-- whatever the key; this index makes that lookup cheap.

CREATE INDEX events_endpoint_payload ON events (endpoint, payload_hash);
