-- Each method's agreement counts with the people's first errors in run $run (the attribution_agreement view).
SELECT * FROM attribution_agreement WHERE run_id = $run ORDER BY method
