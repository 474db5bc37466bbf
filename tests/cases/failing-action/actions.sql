-- SPDX-License-Identifier: MIT
-- The failing-action case: an event whose key is in refused fails (a
-- NULL into a NOT NULL column), as a business constraint would, until
-- the operator's fix deletes the row.
CREATE TABLE IF NOT EXISTS effects (k VARCHAR(191) NOT NULL);
CREATE TABLE IF NOT EXISTS refused (k VARCHAR(191) NOT NULL);
INSERT INTO refused (k) SELECT 'evt_9' FROM (SELECT 1 AS one) AS o
    WHERE NOT EXISTS (SELECT 1 FROM refused);
-- on: *
INSERT INTO effects (k) VALUES (:key);
INSERT INTO effects (k) SELECT NULL FROM refused WHERE refused.k = :key;
