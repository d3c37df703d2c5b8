package fiat

import (
	"context"
	"fmt"
	"strings"

	"github.com/stripe/stripe-go/v82"
)

// Session is an opened processor checkout session.
type Session struct {
	ID  string
	URL string
}

// Checkout opens processor checkout sessions for deposits.
type Checkout interface {
	Open(ctx context.Context, depositID string, amount int64, currency string) (Session, error)
}

// localCheckout is the embedded test processor: its session URL is the
// platform's own checkout page, whose Pay button sends the signed webhook.
type localCheckout struct {
	baseURL string
	newID   func() string
}

func (l localCheckout) Open(_ context.Context, _ string, _ int64, _ string) (Session, error) {
	id := "cs_test_" + l.newID()
	return Session{ID: id, URL: l.baseURL + Prefix + "/checkout/" + id}, nil
}

// stripeCheckout opens real Stripe Checkout sessions (PROCESSOR_API_KEY).
// The deposit id travels in the payment intent's metadata, which is what
// the webhook reads back from payment_intent.succeeded.
type stripeCheckout struct {
	client  *stripe.Client
	baseURL string
}

func newStripeCheckout(key, baseURL string) stripeCheckout {
	return stripeCheckout{client: stripe.NewClient(key), baseURL: baseURL}
}

func (s stripeCheckout) Open(ctx context.Context, depositID string, amount int64, currency string) (Session, error) {
	meta := map[string]string{"depositId": depositID}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:       stripe.String(string(stripe.CheckoutSessionModePayment)),
		SuccessURL: stripe.String(s.baseURL + Prefix + "/me/deposits"),
		CancelURL:  stripe.String(s.baseURL + Prefix + "/me/deposits"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(currency)),
				UnitAmount:  stripe.Int64(amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Wallet top-up")},
			},
		}},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
		Metadata:          meta,
	}
	sess, err := s.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return Session{}, fmt.Errorf("open processor checkout session: %w", err)
	}
	return Session{ID: sess.ID, URL: sess.URL}, nil
}
