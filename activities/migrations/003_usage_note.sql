-- Why a model call's provider-reported usage was not counted as reported (negative, not a whole
-- number, or above the per-turn ceiling): estimated or clamped instead, and said so here.
ALTER TABLE research.model_calls ADD COLUMN usage_note text NOT NULL DEFAULT '';
