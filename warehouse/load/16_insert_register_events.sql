-- The batch's requirement-register transitions, in order.
INSERT INTO register_events BY NAME
SELECT trajectory_id, event_index, e.item_id AS item_id, e.step_index AS step_index,
       e.sub_question AS sub_question, e.from_status AS from_status, e.to_status AS to_status, e.note AS note,
       e.reason AS reason, e.supporting_chunk_ids AS supporting_chunk_ids
FROM (SELECT trajectory_id, unnest(range(len(register_events))) AS event_index, unnest(register_events) AS e
      FROM stage WHERE len(register_events) > 0)
