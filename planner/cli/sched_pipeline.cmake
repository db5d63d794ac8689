# sched-pipeline
