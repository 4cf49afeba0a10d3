//go:build integration && !linux

package devstore

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
