package pipeline_test

import "github.com/twmb/franz-go/pkg/kgo"

func kgoConsume(topic string) []kgo.Opt {
	return []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
}
