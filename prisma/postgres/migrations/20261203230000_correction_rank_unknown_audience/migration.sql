-- A correction whose audience nobody recorded counts as customer-facing (rank 2), as its page reads
-- it: drafts stored before that rule kept rank 0 and sorted first in the queue, among internal ones.
UPDATE "Correction" SET "rank" = 2 WHERE "rank" < 2 AND CASE WHEN jsonb_typeof("audience") = 'array' THEN jsonb_array_length("audience") = 0 ELSE true END;
