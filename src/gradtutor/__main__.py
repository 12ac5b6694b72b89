from gradtutor.cli import main

raise SystemExit(main())
