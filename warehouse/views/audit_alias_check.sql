-- Alias spot-check per (record, baseline) masked with [MASK]: the four surface-form variants of the gold and whether any survives in the masked context.
CREATE OR REPLACE VIEW audit_alias_check AS
WITH masked AS (
    SELECT p.cell, p.audit_id, p.record_id, p.question_id, p.baseline, p.f1 AS f1_masked, p.f1_b1,
           p.f1_base, b.gold_trimmed AS gold, lower(b.gold_trimmed) AS gold_lower,
           string_split_regex(b.gold_trimmed, '\s+') AS words,
           -- records imported without the edited context: re-derive it exactly as the remove edit does
           lower(coalesce(p.context, regexp_replace(b.context, b.gold_regex, '[MASK]', 'g'))) AS masked_lower
    FROM audit_paired p
    JOIN audit_buckets b USING (record_id, baseline)
    WHERE p.intervention = 'remove' AND p.sentinel = '[MASK]' AND p.ans_in_compile
),
raw_variants AS (
    SELECT *,
           -- 1. leading "the" stripped
           CASE WHEN regexp_matches(gold_lower, '^the\s+') THEN regexp_replace(gold_lower, '^the\s+', '') END AS v_the,
           -- 2. last token of a multi-word gold, trailing punctuation stripped, >= 3 characters
           CASE WHEN len(words) >= 2 AND length(regexp_replace(lower(words[-1]), '[[:punct:]]+$', '')) >= 3
                THEN regexp_replace(lower(words[-1]), '[[:punct:]]+$', '') END AS v_last_token,
           -- 3. acronym of the capital-initial words of a multi-word gold, >= 2 characters
           CASE WHEN len(words) >= 2 THEN lower(list_aggr(list_transform(
                    list_filter(words, lambda w: regexp_matches(w, '^[[:upper:]]')), lambda w: w[1]),
                    'string_agg', '')) END AS v_acronym_all,
           -- 4. the 4-digit year of a date-form gold
           CASE WHEN regexp_matches(gold_lower,
                    '\b(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?|sep(t|tember)?|oct(ober)?|nov(ember)?|dec(ember)?)\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{4}\b|\b\d{4}-\d{1,2}-\d{1,2}\b')
                THEN nullif(regexp_extract(gold_lower, '\b(\d{4})\b', 1), '') END AS v_year
    FROM masked
),
variants AS (
    -- variants equal to the full lower-cased gold are dropped, and so is any shorter than 3 characters
    SELECT *,
           CASE WHEN v_the <> gold_lower AND length(v_the) >= 3 THEN v_the END AS variant_the,
           CASE WHEN v_last_token <> gold_lower AND length(v_last_token) >= 3 THEN v_last_token END AS variant_last_token,
           CASE WHEN length(v_acronym_all) >= 2 AND v_acronym_all <> gold_lower AND length(v_acronym_all) >= 3
                THEN v_acronym_all END AS variant_acronym,
           CASE WHEN v_year <> gold_lower AND length(v_year) >= 3 THEN v_year END AS variant_year
    FROM raw_variants
)
SELECT cell, audit_id, record_id, question_id, baseline, gold,
       variant_the, variant_last_token, variant_acronym, variant_year,
       coalesce(contains(masked_lower, variant_the), false) AS fired_the,
       coalesce(contains(masked_lower, variant_last_token), false) AS fired_last_token,
       coalesce(contains(masked_lower, variant_acronym), false) AS fired_acronym,
       coalesce(contains(masked_lower, variant_year), false) AS fired_year,
       coalesce(contains(masked_lower, variant_the), false)
         OR coalesce(contains(masked_lower, variant_last_token), false)
         OR coalesce(contains(masked_lower, variant_acronym), false)
         OR coalesce(contains(masked_lower, variant_year), false) AS flagged,
       f1_masked, f1_b1, f1_base
FROM variants;
COMMENT ON COLUMN audit_alias_check.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_alias_check.audit_id IS 'The audit run the record belongs to.';
COMMENT ON COLUMN audit_alias_check.record_id IS 'Audit record key; only [MASK] remove outputs on contexts that contained the gold.';
COMMENT ON COLUMN audit_alias_check.question_id IS 'Question id: the pairing key across baselines and interventions.';
COMMENT ON COLUMN audit_alias_check.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_alias_check.gold IS 'The trimmed gold answer.';
COMMENT ON COLUMN audit_alias_check.variant_the IS 'The lower-cased gold without a leading the (NULL: no leading the, or shorter than 3 characters).';
COMMENT ON COLUMN audit_alias_check.variant_last_token IS 'Last word of a multi-word gold, trailing punctuation stripped (NULL: one word, equal to the gold, or under 3 characters).';
COMMENT ON COLUMN audit_alias_check.variant_acronym IS 'Acronym of the gold''s capitalised words (NULL: one word, equal to the gold, or under 3 characters).';
COMMENT ON COLUMN audit_alias_check.variant_year IS 'The 4-digit year of a date-form gold (NULL: not a date, or no year).';
COMMENT ON COLUMN audit_alias_check.fired_the IS 'variant_the occurs case-insensitively in the masked context (false when the variant is NULL).';
COMMENT ON COLUMN audit_alias_check.fired_last_token IS 'variant_last_token occurs in the masked context (false when NULL).';
COMMENT ON COLUMN audit_alias_check.fired_acronym IS 'variant_acronym occurs in the masked context (false when NULL).';
COMMENT ON COLUMN audit_alias_check.fired_year IS 'variant_year occurs in the masked context (false when NULL).';
COMMENT ON COLUMN audit_alias_check.flagged IS 'Any variant survives the mask: a heuristic alias leak (an upper bound; last-token fires include false positives).';
COMMENT ON COLUMN audit_alias_check.f1_masked IS 'Reader F1 with the gold replaced by [MASK], in [0, 1].';
COMMENT ON COLUMN audit_alias_check.f1_b1 IS 'Reader token F1 on the b1 raw-retrieval context, in [0, 1] (NULL: no scored b1 output).';
COMMENT ON COLUMN audit_alias_check.f1_base IS 'Reader token F1 on the same baseline''s unperturbed context, in [0, 1].';
