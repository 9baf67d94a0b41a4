-- Per run $run: the wrong trajectories the rules leave undecided (no first-decisive-error rule, no answer-evidence row), with one reason, and the answer-evidence rows that passed a rule over for a missing capability.
SELECT (SELECT count(*) FROM first_decisive_error f
        WHERE f.run_id = $run AND f.rule IS NULL
          AND f.trajectory_id NOT IN (SELECT trajectory_id FROM first_error_answer_evidence WHERE run_id = $run))
                                                                                          AS n_undecided,
       (SELECT min(f.reason) FROM first_decisive_error f
        WHERE f.run_id = $run AND f.rule IS NULL
          AND f.trajectory_id NOT IN (SELECT trajectory_id FROM first_error_answer_evidence WHERE run_id = $run))
                                                                                          AS reason,
       (SELECT count(*) FROM first_error_answer_evidence WHERE run_id = $run AND len(not_checked) > 0)
                                                                                          AS n_rules_passed_over
