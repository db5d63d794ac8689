# pe-plan
