"""What the Context Agent is told of each feature, read leniently.

    feature_records  the orchestrator's record of a feature (`FeatureRecord`, `read_feature`)
    report_reading   the agent's `report_feature` payload
    logs             what the summarizer reads of a feature (`FeatureOutcome`)
    failure_text     a failed check in one line, and a default prevention
"""
