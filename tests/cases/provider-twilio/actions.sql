-- SPDX-License-Identifier: MIT
-- The provider-twilio case: the form's parameters read as JSON members
-- (MediaUrl, sent twice, is an array).
CREATE TABLE IF NOT EXISTS sms (k VARCHAR(191) NOT NULL, sid VARCHAR(64),
    status VARCHAR(32), body TEXT, media TEXT);
-- on: *
INSERT INTO sms (k, sid, status, body, media) VALUES (:key,
    json_extract(:payload, '$.MessageSid'), :type,
    json_extract(:payload, '$.Body'),
    json_extract(:payload, '$.MediaUrl[1]'));
