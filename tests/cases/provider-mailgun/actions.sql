-- SPDX-License-Identifier: MIT
-- provider-mailgun's actions: one effect row per event that took effect;
-- an event of type t.fail fails (as it does on the tests' in-memory
-- engine), in SQL both SQLite and MariaDB take.
CREATE TABLE IF NOT EXISTS effects (k VARCHAR(191) NOT NULL, t VARCHAR(191));
-- on: t.fail
INSERT INTO effects (k, t) VALUES (NULL, :type);
-- on: *
INSERT INTO effects (k, t) VALUES (:key, :type);
