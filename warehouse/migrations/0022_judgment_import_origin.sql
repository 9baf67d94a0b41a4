-- Judgments gain a third origin: 'import', the em / f1 / contain scores the importer computed from a log that carried a gold answer but no verdict.
COMMENT ON TABLE judgments IS 'Verdicts: em / f1 / contain scores in [0, 1] and llm verdicts; origin record (in the log), import (scored by the importer from the log''s gold and final answer) or judge (added by trajscope judge).';
COMMENT ON COLUMN judgments.origin IS 'record (carried by the log), import (scored by the importer from the log''s gold and final answer: the log carried no verdict) or judge (added by trajscope judge).';
