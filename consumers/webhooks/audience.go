package webhooks

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// OwnerStore resolves wallet owners.
type OwnerStore interface {
	WalletOwners(ctx context.Context, walletIDs []string) (map[string]string, error)
}

// Audience tells whom an event record is about, by the rules subscriptions
// are matched with (Subjects): the user ids it names and the owners of the
// wallets it names. It serves the per-user event streams. A wallet's owner
// never changes, so owners are cached (up to maxOwners ids, misses too).
type Audience struct {
	store  OwnerStore
	mu     sync.Mutex
	owners map[string]string
}

const maxOwners = 100_000

// NewAudience builds an Audience over the wallet table.
func NewAudience(st OwnerStore) *Audience {
	return &Audience{store: st, owners: map[string]string{}}
}

// Users returns the users an event record is about; an unreadable record is
// about nobody.
func (a *Audience) Users(ctx context.Context, rec *kgo.Record) ([]string, error) {
	ev, err := ParseRecord(rec)
	if err != nil {
		return nil, nil
	}
	users, wallets := Subjects(ev)
	var unknown []string
	a.mu.Lock()
	for _, w := range wallets {
		if o, ok := a.owners[w]; ok {
			if o != "" {
				users = append(users, o)
			}
		} else {
			unknown = append(unknown, w)
		}
	}
	a.mu.Unlock()
	if len(unknown) == 0 {
		return users, nil
	}
	found, err := a.store.WalletOwners(ctx, unknown)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.owners)+len(found) > maxOwners {
		a.owners = map[string]string{}
	}
	// Ids that name no wallet (user ids tried as keys) are cached as "".
	for _, w := range unknown {
		o := found[w]
		a.owners[w] = o
		if o != "" {
			users = append(users, o)
		}
	}
	return users, nil
}
