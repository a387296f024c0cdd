package app

import "github.com/minik8s/minik8s/internal/daemon"

// ConfigFile is the scheduler's --config: kube-scheduler's
// KubeSchedulerConfiguration, the fields that have a flag here.
var ConfigFile = &daemon.ConfigFile{
	APIVersion: "kubescheduler.config.k8s.io/v1",
	Kind:       "KubeSchedulerConfiguration",
	New:        func() daemon.Config { return &KubeSchedulerConfiguration{} },
}

// KubeSchedulerConfiguration is the part of kubescheduler.config.k8s.io/v1
// the scheduler supports; other fields (profiles, extenders...) are
// ignored with a warning.
type KubeSchedulerConfiguration struct {
	Parallelism              *int64                                `json:"parallelism"`
	PercentageOfNodesToScore *int64                                `json:"percentageOfNodesToScore"`
	PodInitialBackoffSeconds *int64                                `json:"podInitialBackoffSeconds"`
	PodMaxBackoffSeconds     *int64                                `json:"podMaxBackoffSeconds"`
	LeaderElection           *daemon.LeaderElectionConfiguration   `json:"leaderElection"`
	ClientConnection         *daemon.ClientConnectionConfiguration `json:"clientConnection"`
}

// FlagValues maps the fields to the scheduler's flags.
func (c *KubeSchedulerConfiguration) FlagValues() (daemon.FlagValues, error) {
	var v daemon.FlagValues
	v.Int("parallelism", "parallelism", c.Parallelism)
	v.Int("percentageOfNodesToScore", "percentage-of-nodes-to-score", c.PercentageOfNodesToScore)
	v.Seconds("podInitialBackoffSeconds", "pod-initial-backoff", c.PodInitialBackoffSeconds)
	v.Seconds("podMaxBackoffSeconds", "pod-max-backoff", c.PodMaxBackoffSeconds)
	c.ClientConnection.AddTo(&v, "clientConnection")
	if err := c.LeaderElection.AddTo(&v, "leaderElection"); err != nil {
		return nil, err
	}
	return v, nil
}
