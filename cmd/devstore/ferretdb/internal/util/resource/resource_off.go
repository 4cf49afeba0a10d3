// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//go:build !(ferretdb_debug || race)

// seqd change: this file is seqd's, for builds without the ferretdb_debug
// and race tags: Track and Untrack do nothing (see resource.go).

package resource

// Token should be a field of a tracked object.
type Token byte

// NewToken returns a new Token.
func NewToken() *Token {
	return new(Token)
}

// Track does nothing in this build.
func Track(obj any, token *Token) {}

// Untrack does nothing in this build.
func Untrack(obj any, token *Token) {}
