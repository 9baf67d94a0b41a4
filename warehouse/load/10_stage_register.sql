-- Register resolution per trajectory, fixed by the record: items, resolved items, and whether every item ended resolved or retired.
CREATE OR REPLACE TEMP TABLE stage_register AS
WITH last AS (
    SELECT trajectory_id, e.item_id, arg_max(e.to_status, event_index) AS status
    FROM (SELECT trajectory_id, unnest(range(len(register_events))) AS event_index,
                 unnest(register_events) AS e
          FROM stage WHERE len(register_events) > 0)
    GROUP BY ALL
)
SELECT trajectory_id,
       count(*)                                   AS n_register_items,
       count(*) FILTER (status = 'resolved')      AS n_register_resolved,
       bool_and(status IN ('resolved', 'retired')) AND count(*) FILTER (status = 'resolved') > 0
                                                  AS register_complete
FROM last GROUP BY trajectory_id
