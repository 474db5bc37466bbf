-- SPDX-License-Identifier: MIT
-- The gitlab-sections case: one section for two quoted event types
-- with spaces in them; a third type has no section.
CREATE TABLE IF NOT EXISTS gitlab_pushes (k VARCHAR(191) NOT NULL,
    t VARCHAR(191) NOT NULL);
-- on: "Push Hook", "Tag Push Hook"
INSERT INTO gitlab_pushes (k, t) VALUES (:key, :type);
