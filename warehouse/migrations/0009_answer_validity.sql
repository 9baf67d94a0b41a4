-- Answer checks say whether the final answer echoes a controller message or names every option of a comparison question (trajscope.format.answer_invalidity): no judge counts either as correct.
ALTER TABLE answer_checks ADD COLUMN IF NOT EXISTS echoed BOOLEAN;
ALTER TABLE answer_checks ADD COLUMN IF NOT EXISTS hedged BOOLEAN;
COMMENT ON COLUMN answer_checks.echoed IS 'The final answer repeats a controller message shown to the agent (a gate rejection, budget nudge, force-answer prompt or error notice: half its tokens in the message''s word trigrams); it then also counts as abstained and scores 0 under every judge. NULL: checked before this column existed.';
COMMENT ON COLUMN answer_checks.hedged IS 'The question is a comparison naming options ("..., A or B?") and the final answer names every one; it then scores 0 under every judge. NULL: checked before this column existed.';
COMMENT ON COLUMN answer_checks.abstained IS 'The final answer is empty, a bare abstention word or a give-up phrase, or echoes a controller message (echoed).';
