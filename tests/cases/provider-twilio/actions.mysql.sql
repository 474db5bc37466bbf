-- SPDX-License-Identifier: MIT
-- The provider-twilio case on MariaDB/MySQL: actions.sql, with
-- JSON_UNQUOTE where SQLite's json_extract() unquotes by itself.
CREATE TABLE IF NOT EXISTS sms (k VARCHAR(191) NOT NULL, sid VARCHAR(64),
    status VARCHAR(32), body TEXT, media TEXT);
-- on: *
INSERT INTO sms (k, sid, status, body, media) VALUES (:key,
    JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.MessageSid')), :type,
    JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.Body')),
    JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.MediaUrl[1]')));
