-- A correction whose audience nobody recorded counts as customer-facing (rank 2), as its page reads
-- it: drafts stored before that rule kept rank 0 and sorted first in the queue, among internal ones.
UPDATE "Correction" SET "rank" = 2 WHERE "rank" < 2 AND json_array_length("audience") = 0;
