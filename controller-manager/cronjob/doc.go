// Package cronjob is kube-controller-manager's "cronjob" controller: at
// each time a CronJob's schedule names (standard five-field cron, the
// @hourly/@daily/@weekly/@monthly/@yearly/@every macros, in spec.timeZone)
// it creates a Job NAME-<unix minutes> from the job template, honouring
// concurrencyPolicy, startingDeadlineSeconds and suspend; it tracks the
// CronJob's active Jobs, lastScheduleTime and lastSuccessfulTime, and
// deletes finished Jobs past the history limits. Cron parsing is
// github.com/robfig/cron/v3, as in kube, through api/cron.
package cronjob
