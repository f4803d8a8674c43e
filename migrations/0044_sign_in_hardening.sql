-- Migration 44 (issue 52, the low findings). The addresses each account signed in from
-- (L3): the sign-in throttle exempts them from the account-wide lockout, and a restart
-- now reads them back, so guesses after a restart cannot lock the only administrator out.
CREATE TABLE sign_in_addresses (
    account         TEXT NOT NULL,
    address         TEXT NOT NULL,
    signed_in_at_ms INTEGER NOT NULL,
    PRIMARY KEY (account, address)
) WITHOUT ROWID;

-- Who asked for a device code (L9): the approval page shows where from, with what, and
-- when; the hook token the approved code yields takes the label the machine asked for.
ALTER TABLE device_authorizations ADD COLUMN requested_from TEXT;
ALTER TABLE device_authorizations ADD COLUMN user_agent TEXT;
ALTER TABLE device_authorizations ADD COLUMN label TEXT;

-- Unknown identities longer than a mapping can hold (L6) were counted whole before: they
-- are counts of refused records, never a person's data, so they go rather than being
-- cut (two cut alike would collide on the key). New ones are cut to 320 characters.
DELETE FROM otlp_unknown_identities WHERE length(value) > 320;
