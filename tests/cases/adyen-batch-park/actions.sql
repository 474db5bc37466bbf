-- SPDX-License-Identifier: MIT
-- The Adyen batch cases: one effect per item that took effect, with its
-- amount read from the item's object (an item is an event: :payload is
-- the item); an item whose key is in refused fails (a NULL into a NOT
-- NULL column) until the operator's fix deletes the row.
CREATE TABLE IF NOT EXISTS effects (k VARCHAR(191) NOT NULL, t VARCHAR(191),
    v INTEGER);
CREATE TABLE IF NOT EXISTS refused (k VARCHAR(191) NOT NULL);
INSERT INTO refused (k) SELECT '7914073381342212:CAPTURE:true'
    FROM (SELECT 1 AS one) AS o WHERE NOT EXISTS (SELECT 1 FROM refused);
-- on: *
INSERT INTO effects (k, t, v)
    VALUES (:key, :type, json_extract(:payload, '$.amount.value'));
INSERT INTO effects (k) SELECT NULL FROM refused WHERE refused.k = :key;
