package schemas

import (
	"testing"
	"time"
)

func TestFee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		amount, want int64
	}{
		{1, 1}, {2, 1}, {999, 1}, {1000, 1}, {1001, 2}, {1999, 2}, {2000, 2}, {2001, 3},
		{100_000, 100}, {100_001, 101}, {1_000_000_000_000_000, 1_000_000_000_000},
	}
	for _, tt := range tests {
		if got := TransferFee(tt.amount); got != tt.want {
			t.Errorf("TransferFee(%d) = %d, want %d", tt.amount, got, tt.want)
		}
	}
}

func TestCaps(t *testing.T) {
	t.Parallel()
	caps := FiatCaps{PerTransfer: 100, DailyDeposit: 500, Monthly: 1000}
	tests := []struct {
		name     string
		kyc      bool
		amount   int64
		monthOut int64
		perTx    bool
		want     bool
	}{
		{"within", false, 100, 0, true, true},
		{"over per-transfer", false, 101, 0, true, false},
		{"per-transfer cap not for withdrawals", false, 101, 0, false, true},
		{"monthly reached exactly", false, 100, 900, true, true},
		{"monthly exceeded", false, 100, 901, true, false},
		{"kyc lifts per-transfer", true, 1_000_000, 0, true, true},
		{"kyc lifts monthly", true, 10, 5_000, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := caps.CapCheck(tt.kyc, tt.amount, tt.monthOut, tt.perTx); got != tt.want {
				t.Fatalf("CapCheck = %v, want %v", got, tt.want)
			}
		})
	}
	deposits := []struct {
		name          string
		kyc           bool
		amount, today int64
		want          bool
	}{
		{"first", false, 500, 0, true},
		{"over daily", false, 1, 500, false},
		{"kyc", true, 10_000, 500, true},
	}
	for _, tt := range deposits {
		t.Run(tt.name, func(t *testing.T) {
			if got := caps.DepositAllowed(tt.kyc, tt.amount, tt.today); got != tt.want {
				t.Fatalf("DepositAllowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPeriods(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 31, 23, 59, 0, 0, time.FixedZone("ALMT", 5*3600))
	if got := MonthKey(at); got != "2026-03" {
		t.Fatalf("MonthKey = %s", got)
	}
	if got := DayStart(at); !got.Equal(time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("DayStart = %s", got)
	}
}
