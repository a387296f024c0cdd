// Package cron parses the schedules of CronJobs as Kubernetes does, with
// github.com/robfig/cron/v3's standard parser (five fields or an @hourly
// style descriptor, an optional TZ= or CRON_TZ= prefix), so that the
// apiserver's validation and the cronjob controller agree on what a
// schedule means and on the words of its errors. It embeds the IANA time
// zone database (time/tzdata): the daemons run in images with no zoneinfo
// of their own, and a CronJob's timeZone must mean the same everywhere.
package cron
