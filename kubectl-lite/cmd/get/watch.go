package get

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/printers"
)

// watch prints every change as it arrives, until the server ends the
// stream or the command is interrupted.
func watch(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool) error {
	return watchWith(cmd, d, p, info, lo, watchEvents, nil)
}

// watchFiltered is watch printing only the objects keep accepts.
func watchFiltered(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, keep func(printers.Obj) bool) error {
	return watchWith(cmd, d, p, info, lo, false, keep)
}

func watchWith(cmd *cobra.Command, d *client.DynamicClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool, keep func(printers.Obj) bool) error {
	ctx := cmd.Context()
	w, err := d.Watch(ctx, lo)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case api.Error:
				if ev.Status != nil {
					return fmt.Errorf("watch: %s", ev.Status.Message)
				}
				return errors.New("watch ended with an error")
			case api.Bookmark:
				continue
			}
			if ev.Object == nil {
				continue
			}
			if keep != nil && !keep(ev.Object.Object) {
				continue
			}
			if watchEvents {
				p.event = string(ev.Type)
			}
			if err := p.printWatched(info, ev.Object.Object); err != nil {
				return err
			}
		}
	}
}

// watchTables prints a watch of tables, as kubectl get -w does: each
// event's one-row table continues the table printed so far (its columns,
// its widths), with the event type first with --output-watch-events.
func watchTables(cmd *cobra.Command, tc *client.TableClient, p *printer, info api.ResourceInfo, lo client.ListOptions, watchEvents bool) error {
	ctx := cmd.Context()
	w, err := tc.Watch(ctx, lo)
	if err != nil {
		return err
	}
	defer w.Stop()
	if p.tables == nil {
		p.startTable(info)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch ev.Type {
			case api.Error:
				if ev.Status != nil {
					return fmt.Errorf("watch: %s", ev.Status.Message)
				}
				return errors.New("watch ended with an error")
			case api.Bookmark:
				continue
			}
			if ev.Object == nil {
				continue
			}
			event := ""
			if watchEvents {
				event = string(ev.Type)
			}
			if err := p.printTable(tableOf(ev.Object), event); err != nil {
				return err
			}
		}
	}
}
