-- Language-model scanners (trajscope scan / attribute / cluster): rubrics, verdicts and step
-- attributions, clusterings, and people's labels of verdicts. Written only by warehouse.verdicts.
-- Each verdict carries the record_hash of the trajectory version it read, so views ignore verdicts
-- left over from an older version after a re-ingest.

CREATE TABLE IF NOT EXISTS rubrics (
    rubric_hash       VARCHAR NOT NULL,
    rubric_text       VARCHAR NOT NULL,
    created_at        TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS scan_verdicts (
    verdict_id         VARCHAR NOT NULL,
    scanner            VARCHAR NOT NULL,
    trajectory_id      VARCHAR NOT NULL,
    record_hash        VARCHAR NOT NULL,
    rubric_hash        VARCHAR,
    protocol           VARCHAR,
    model              VARCHAR NOT NULL,
    prompt_version     VARCHAR NOT NULL,
    verdict            VARCHAR NOT NULL,
    explanation        VARCHAR,
    cited_steps        INTEGER[],
    rejected_citations VARCHAR[],
    step_index         INTEGER,
    agent              VARCHAR,
    error              VARCHAR,
    token_budget       INTEGER,
    truncated          BOOLEAN,
    n_calls            INTEGER,
    tokens_in          BIGINT,
    tokens_out         BIGINT,
    cost_usd           DOUBLE,
    cached             BOOLEAN,
    created_at         TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS verdict_labels (
    verdict_id        VARCHAR NOT NULL,
    label             VARCHAR NOT NULL,
    note              VARCHAR,
    labelled_at       TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS clusterings (
    clustering_id     VARCHAR NOT NULL,
    method            VARCHAR NOT NULL,
    model             VARCHAR,
    slice_sql         VARCHAR,
    k                 INTEGER NOT NULL,
    n_trajectories    INTEGER NOT NULL,
    created_at        TIMESTAMPTZ DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS clusters (
    clustering_id     VARCHAR NOT NULL,
    cluster_index     INTEGER NOT NULL,
    name              VARCHAR NOT NULL,
    description       VARCHAR,
    examples          VARCHAR[]
);

CREATE TABLE IF NOT EXISTS cluster_members (
    clustering_id     VARCHAR NOT NULL,
    trajectory_id     VARCHAR NOT NULL,
    record_hash       VARCHAR NOT NULL,
    cluster_index     INTEGER NOT NULL,
    explanation       VARCHAR
);

COMMENT ON TABLE rubrics IS 'Rubric texts a scan asked about, by hash (trajscope scan).';
COMMENT ON COLUMN rubrics.rubric_hash IS 'First 16 hex digits of the SHA-256 of the rubric text: the rubric''s identity in verdicts and in compare --rubric.';
COMMENT ON COLUMN rubrics.rubric_text IS 'The rubric as the model was given it.';
COMMENT ON COLUMN rubrics.created_at IS 'When the rubric was first stored.';

COMMENT ON TABLE scan_verdicts IS 'One model verdict per (scanner, trajectory, rubric or protocol, model, prompt version): rubric verdicts (trajscope scan) and step attributions (trajscope attribute).';
COMMENT ON COLUMN scan_verdicts.verdict_id IS 'Hash of (scanner, trajectory, rubric hash or protocol, model, prompt version); a re-run replaces the row, and labels refer to it.';
COMMENT ON COLUMN scan_verdicts.scanner IS 'rubric (trajscope scan) or attribution (trajscope attribute).';
COMMENT ON COLUMN scan_verdicts.trajectory_id IS 'The trajectory the model read.';
COMMENT ON COLUMN scan_verdicts.record_hash IS 'record_hash of the trajectory version the model read; views drop verdicts of an older version.';
COMMENT ON COLUMN scan_verdicts.rubric_hash IS 'Rubric asked about (rubrics.rubric_hash); NULL for an attribution.';
COMMENT ON COLUMN scan_verdicts.protocol IS 'Attribution protocol: all-at-once, step-by-step, binary-search or hybrid (Who&When, Zhang et al. ICML 2025); NULL for a rubric verdict.';
COMMENT ON COLUMN scan_verdicts.model IS 'Model that gave the verdict (its name on the endpoint, or the embedded model''s name).';
COMMENT ON COLUMN scan_verdicts.prompt_version IS 'Version of the prompt template (engine.scanners); a changed template is a different verdict.';
COMMENT ON COLUMN scan_verdicts.verdict IS 'Rubric: match, no_match, unsure, or error (malformed reply or failed call). Attribution: attributed, or error.';
COMMENT ON COLUMN scan_verdicts.explanation IS 'The model''s explanation (rubric) or reason for the decisive step (attribution); NULL on error.';
COMMENT ON COLUMN scan_verdicts.cited_steps IS 'Step indices the model cited that exist in the trajectory (rubric verdicts).';
COMMENT ON COLUMN scan_verdicts.rejected_citations IS 'Citations the model gave that name no step of the trajectory: rejected, never stored as cited steps.';
COMMENT ON COLUMN scan_verdicts.step_index IS 'Attribution: the decisive step the model named (0-based steps.step_index); NULL for a rubric verdict or on error.';
COMMENT ON COLUMN scan_verdicts.agent IS 'Attribution: the agent responsible, where the log names agents (NULL: the log has none, or error).';
COMMENT ON COLUMN scan_verdicts.error IS 'Why there is no verdict: the call failed after retries, the reply was not the JSON asked for, or it named a step outside the trajectory (NULL: none).';
COMMENT ON COLUMN scan_verdicts.token_budget IS 'Token budget the rendered trajectory was cut to (estimated at 4 characters a token).';
COMMENT ON COLUMN scan_verdicts.truncated IS 'The rendered trajectory was cut to fit the budget (the prompt shows where).';
COMMENT ON COLUMN scan_verdicts.n_calls IS 'Model calls the verdict took (1 for a rubric; binary and step-by-step search take several).';
COMMENT ON COLUMN scan_verdicts.tokens_in IS 'Prompt tokens over the verdict''s calls (NULL: not reported).';
COMMENT ON COLUMN scan_verdicts.tokens_out IS 'Completion tokens over the verdict''s calls (NULL: not reported).';
COMMENT ON COLUMN scan_verdicts.cost_usd IS 'Cost of the calls in USD from the price table (NULL: unknown price); a cached reply reports the original cost.';
COMMENT ON COLUMN scan_verdicts.cached IS 'Every call of the verdict was answered from the response cache.';
COMMENT ON COLUMN scan_verdicts.created_at IS 'When the verdict was stored.';

COMMENT ON TABLE verdict_labels IS 'People''s labels of model verdicts (agree / disagree / unsure), from the dashboard; the latest label per verdict counts.';
COMMENT ON COLUMN verdict_labels.verdict_id IS 'The verdict labelled (scan_verdicts.verdict_id).';
COMMENT ON COLUMN verdict_labels.label IS 'agree, disagree or unsure: whether the person agrees with the model''s verdict.';
COMMENT ON COLUMN verdict_labels.note IS 'Free-text note of the labeller (NULL: none).';
COMMENT ON COLUMN verdict_labels.labelled_at IS 'When the label was given.';

COMMENT ON TABLE clusterings IS 'One clustering of a slice into failure modes (trajscope cluster).';
COMMENT ON COLUMN clusterings.clustering_id IS 'Hash of (method, model, slice, k, trajectories); a re-run replaces it.';
COMMENT ON COLUMN clusterings.method IS 'propose-assign (a model proposes k themes, then assigns each trajectory, with other) or embedding (k-means over all-MiniLM-L6-v2 embeddings of what the agent did).';
COMMENT ON COLUMN clusterings.model IS 'Chat model (propose-assign) or embedding model (embedding).';
COMMENT ON COLUMN clusterings.slice_sql IS 'The SQL condition that chose the trajectories (NULL: whole runs).';
COMMENT ON COLUMN clusterings.k IS 'Number of themes asked for (propose-assign; other comes on top) or clusters (embedding).';
COMMENT ON COLUMN clusterings.n_trajectories IS 'Trajectories clustered.';
COMMENT ON COLUMN clusterings.created_at IS 'When the clustering was stored.';

COMMENT ON TABLE clusters IS 'The clusters of a clustering, with a name, a description and example trajectories.';
COMMENT ON COLUMN clusters.clustering_id IS 'The clustering (clusterings.clustering_id).';
COMMENT ON COLUMN clusters.cluster_index IS 'Cluster number from 0; for propose-assign the last one is other.';
COMMENT ON COLUMN clusters.name IS 'Short name: the model''s theme title, or the embedding cluster''s most frequent action words.';
COMMENT ON COLUMN clusters.description IS 'One-sentence description of the cluster (NULL: none).';
COMMENT ON COLUMN clusters.examples IS 'Up to three example trajectory ids (closest to the centroid for embedding clusters).';

COMMENT ON TABLE cluster_members IS 'Which cluster each trajectory of a clustering was assigned to.';
COMMENT ON COLUMN cluster_members.clustering_id IS 'The clustering (clusterings.clustering_id).';
COMMENT ON COLUMN cluster_members.trajectory_id IS 'The trajectory assigned.';
COMMENT ON COLUMN cluster_members.record_hash IS 'record_hash of the trajectory version clustered.';
COMMENT ON COLUMN cluster_members.cluster_index IS 'Its cluster (clusters.cluster_index); the other theme for a propose-assign trajectory that fits none, and also for a failed or malformed reply.';
COMMENT ON COLUMN cluster_members.explanation IS 'Why the model assigned it there (propose-assign; NULL for embedding or on error).';
