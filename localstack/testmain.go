package localstack

import (
	"context"
	"fmt"
	"os"
	"time"
)

// RunWithEmulator is the body of an integration test package's TestMain:
// it finds or starts an emulator (see Discover), hands it to use, runs the
// tests and stops the emulator, returning the exit code. With no emulator
// it says why and returns 1: integration tests fail, they never skip.
//
//	func TestMain(m *testing.M) {
//		os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
//	}
func RunWithEmulator(m interface{ Run() int }, use func(*Emulator)) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	em, err := Discover(ctx, DiscoverOptions{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: these tests need an AWS emulator:", err)
		return 1
	}
	use(em)
	code := m.Run()
	if err := em.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close emulator:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
