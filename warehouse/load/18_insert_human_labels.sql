-- Human step labels the records carry (origin 'log'); a --labels file adds origin 'file' rows after the load.
INSERT INTO human_step_labels BY NAME
SELECT trajectory_id, ordinal - 1 AS ordinal, h.source_ref AS source_ref, h.step_index AS step_index,
       h.label AS label, h.category AS category, h.category_raw AS category_raw, h.impact AS impact,
       h.agent AS agent, h.annotator AS annotator, h.source AS source, h.reason AS reason,
       h.evidence AS evidence, 'log' AS origin, NULL AS label_file
FROM (SELECT trajectory_id, unnest(human_labels) AS h, unnest(range(1, len(human_labels) + 1)) AS ordinal
      FROM stage WHERE len(human_labels) > 0)
