package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fintech/platform/e2e/harness"
)

// TestClusterAlertReachesReceiver: the local cluster's Prometheus and
// Alertmanager page a webhook receiver (CLUSTER_ALERT_WEBHOOK, here one in
// the test). Both processes of the mask-applier group are stopped: the
// broker reports the group without members, ConsumerGroupWithoutMembers
// fires after its 2 minutes and reaches the receiver; the processes are
// started again (cluster.sh up) and the receiver is told it resolved.
func TestClusterAlertReachesReceiver(t *testing.T) {
	t.Parallel() // a long test: see "Parallel tests" in main_test.go
	harness.NeedCluster(t)
	const alert, group = "ConsumerGroupWithoutMembers", "mask-applier"
	type notice struct {
		status string
		at     time.Time
	}
	var mu sync.Mutex
	var notices []notice
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Alerts []struct {
				Status string            `json:"status"`
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, a := range msg.Alerts {
			if a.Labels["alertname"] == alert && a.Labels["group"] == group {
				notices = append(notices, notice{a.Status, time.Now()})
			}
		}
	}))
	defer rec.Close()
	waitFor := func(status string, since time.Time, within time.Duration) time.Duration {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			mu.Lock()
			for _, n := range notices {
				if n.status == status && n.at.After(since) {
					mu.Unlock()
					return n.at.Sub(since)
				}
			}
			mu.Unlock()
			time.Sleep(time.Second)
		}
		t.Fatalf("%s{group=%q} not %s at the receiver within %s (notices %v)", alert, group, status, within, notices)
		return 0
	}

	c := harness.StartLocalCluster(t, t.Failed, nil)
	// Alertmanager reads its receiver when it starts: again, with ours
	c.SetScriptEnv("CLUSTER_ALERT_WEBHOOK=" + rec.URL)
	c.Stop("alertmanager", 30*time.Second)
	c.Up()

	stopped := time.Now()
	c.Stop(group+"-1", 30*time.Second)
	c.Stop(group+"-2", 30*time.Second)
	fired := waitFor("firing", stopped, 4*time.Minute)
	t.Logf("%s{group=%q} reached the receiver %s after both processes stopped (for: 2m)", alert, group, fired.Round(time.Second))

	restarted := time.Now()
	c.Up()
	resolved := waitFor("resolved", restarted, 3*time.Minute)
	t.Logf("resolved at the receiver %s after cluster.sh up started them again", resolved.Round(time.Second))
}
