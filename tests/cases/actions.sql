-- SPDX-License-Identifier: MIT
-- The request cases' default actions (tests/cases/README.md): one effect
-- row per event that took effect, in SQL both SQLite and MariaDB take.
CREATE TABLE IF NOT EXISTS effects (k VARCHAR(191) NOT NULL, t VARCHAR(191));
-- on: fail.always
INSERT INTO effects (k, t) VALUES (NULL, :type);
-- on: *
INSERT INTO effects (k, t) VALUES (:key, :type);
