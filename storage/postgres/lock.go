package postgres

import (
	"fmt"

	"github.com/pressly/goose/v3/lock"
)

func lockFor() (lock.SessionLocker, error) {
	l, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	return l, nil
}
